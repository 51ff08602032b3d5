/*
 * The output directory, written atomically. emit_program() first prints
 * every file into an unnamed temporary file (tmpfile(): the system deletes
 * it when it is closed or when tvmcc exits, by abort() too), so an
 * internal error while the C is generated leaves nothing on disk. Only
 * then is a fresh directory made next to the destination (same file
 * system), the files copied into it, and the directory renamed into place
 * (when the destination already exists, the files are renamed into it
 * one by one). Copying cannot die(); a failure removes the directory. A
 * user of the output therefore sees the old files or complete new ones,
 * never a half-written file.
 */
#define _DEFAULT_SOURCE
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "../emit_c/emit.h"
#include "../ir/progress.h"

void pipeline_remove_tree(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (dp) {
        while ((e = readdir(dp)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(dp);
    }
    rmdir(dir);
}

char *pipeline_first_line(Arena *a, const char *path)
{
    char line[300];
    FILE *f = fopen(path, "r");
    if (!f)
        return arena_strdup(a, "(no output)");
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    fclose(f);
    line[strcspn(line, "\r\n")] = 0;
    return arena_strdup(a, line[0] ? line : "(no output)");
}

/* Copies the emitted files into directory dir. */
static int write_files(EmitFiles *fs, const char *dir, Diag *d)
{
    char buf[16384];
    char path[4096];
    int i;
    for (i = 0; i < fs->n; i++) {
        FILE *out;
        size_t n;
        int bad;
        snprintf(path, sizeof path, "%s/%s", dir, fs->file[i].name);
        out = fopen(path, "wb");
        if (!out)
            return diag_error(d, NULL, NULL, "cannot write %s: %s", path, strerror(errno));
        rewind(fs->file[i].f);
        while ((n = fread(buf, 1, sizeof buf, fs->file[i].f)) > 0)
            fwrite(buf, 1, n, out);
        bad = ferror(out) || ferror(fs->file[i].f);
        if (fclose(out) != 0 || bad)
            return diag_error(d, NULL, NULL, "error writing %s/%s: %s", dir, fs->file[i].name,
                              strerror(errno));
    }
    return 0;
}

int pipeline_write(Program *p, const char *dir, Diag *d)
{
    EmitFiles fs;
    int rc = emit_program(p, &fs, d) || write_files(&fs, dir, d);
    emit_files_close(&fs);
    return rc;
}

/* Moves the finished temporary directory to its destination. */
static int install_dir(const char *tmp, const char *dest, Diag *d)
{
    struct stat st;
    DIR *dp;
    struct dirent *e;
    char from[4096], to[4096];
    if (stat(dest, &st) != 0) {
        if (rename(tmp, dest) == 0)
            return 0;
        return diag_error(d, NULL, NULL, "cannot create output directory %s: %s", dest, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return diag_error(d, NULL, NULL, "output path %s exists and is not a directory", dest);
    dp = opendir(tmp);
    if (!dp)
        return diag_error(d, NULL, NULL, "cannot read %s: %s", tmp, strerror(errno));
    while ((e = readdir(dp)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(from, sizeof from, "%s/%s", tmp, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dest, e->d_name);
        if (rename(from, to) != 0) {
            closedir(dp);
            return diag_error(d, NULL, NULL, "cannot write %s: %s", to, strerror(errno));
        }
    }
    closedir(dp);
    rmdir(tmp);
    return 0;
}

static char *make_tmp_dir(Arena *a, const char *dest, Diag *d)
{
    char *parent = arena_strdup(a, dest), *slash, *tmpl;
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    slash = strrchr(parent, '/');
    if (slash == parent)
        parent = arena_strdup(a, "/");
    else if (slash)
        *slash = 0;
    else
        parent = arena_strdup(a, ".");
    /* like mkdir -p for the parents of the output directory */
    {
        char *c;
        for (c = parent + 1; *c; c++) {
            if (*c != '/')
                continue;
            *c = 0;
            mkdir(parent, 0777);
            *c = '/';
        }
        mkdir(parent, 0777);
    }
    tmpl = arena_printf(a, "%s/.tvmcc-tmp-XXXXXX", parent);
    if (!mkdtemp(tmpl)) {
        diag_error(d, NULL, NULL, "cannot create output directory %s: %s", dest, strerror(errno));
        return NULL;
    }
    {
        /* mkdtemp makes it private (0700); give it the mode mkdir would */
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmpl, 0777 & ~mask);
    }
    return tmpl;
}

/* NAME_report.html into the finished directory dir, its code sizes
 * measured from dir's sources first. */
static int write_report(Program *p, const char *dir, ReportInfo *ri, Arena *a, Diag *d)
{
    const char *path = arena_printf(a, "%s/%s_report.html", dir, p->name);
    FILE *f;
    int bad;
    report_code_size(p, dir, a, ri);
    progress_note("writing the report", 0, 0);
    f = fopen(path, "wb");
    if (!f)
        return diag_error(d, NULL, NULL, "cannot write %s: %s", path, strerror(errno));
    emit_report_html(p, ri, f);
    bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return diag_error(d, NULL, NULL, "error writing %s: %s", path, strerror(errno));
    return 0;
}

int pipeline_install(Program *p, const char *dest, Arena *a, Diag *d)
{
    return pipeline_install_report(p, dest, NULL, a, d);
}

int pipeline_install_report(Program *p, const char *dest, ReportInfo *ri, Arena *a, Diag *d)
{
    EmitFiles fs;
    char *tmp;
    int rc = 1;
    if (emit_program(p, &fs, d))
        goto done;
    tmp = make_tmp_dir(a, dest, d);
    if (!tmp)
        goto done;
    if (write_files(&fs, tmp, d) || (ri && write_report(p, tmp, ri, a, d)) ||
        install_dir(tmp, dest, d)) {
        pipeline_remove_tree(tmp);
        goto done;
    }
    rc = 0;
done:
    emit_files_close(&fs);
    return rc;
}
