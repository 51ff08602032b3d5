#!/bin/sh
# Realistic inputs for the models of test/quantize/models.sh, in the ONNX
# test-data layout, as two disjoint sets (other sentences, voices, words):
#
#   test/quantize/gen_data.sh MODELDIR OUTDIR
#
#   OUTDIR/calib/MODEL/NAME/input_0.pb   calibration samples
#   OUTDIR/eval/MODEL/NAME/input_0.pb    evaluation samples
#   OUTDIR/eval/MODEL/NAME/output_0.pb   the float model's output there
#                                        (onnxruntime-node, ort_eval.js
#                                        --save-ref)
#   OUTDIR/{calib,eval}/ocr_rec.labels   "NAME<tab>text" of each ocr_rec
#                                        sample (ocr_cls samples are named
#                                        NAME_r0 and NAME_r180: the angle)
#
# MODEL is embedding_model and melspectrogram (speech: espeak-ng -> sox
# 16 kHz mono 16-bit -> melspectrogram.onnx in onnxruntime-node (mel.js)
# -> x/10+2 -> 76-frame windows; 48 windows per set from 16 utterances),
# ocr_cls and ocr_rec (text lines rendered by ImageMagick in DejaVu fonts,
# half of the ocr_cls ones rotated by 180 degrees; 48 per set) and ocr_det
# (320x320 pages of a few lines; 16 per set). MODELDIR is models.sh's
# OUTDIR. The same tools give the same
# bytes on every run. Prints "SKIP: <tool> not installed" and exits 77 when
# a tool is missing (scripts/deps.sh test installs them).
set -e
[ $# = 2 ] || { echo "usage: test/quantize/gen_data.sh MODELDIR OUTDIR" >&2; exit 2; }
models=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
for t in espeak-ng sox convert node; do
    command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
done
$py -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3-onnx not installed"; exit 77; }
[ -d "${ORT_NODE_MODULES:-$root/build/node/node_modules}/onnxruntime-node" ] ||
    { echo "SKIP: onnxruntime-node not installed (build/node)"; exit 77; }
for m in embedding_model melspectrogram ocr_cls ocr_rec ocr_det; do
    [ -f "$models/$m.onnx" ] || { echo "gen_data.sh: $models/$m.onnx missing (run models.sh)" >&2; exit 1; }
done
font=/usr/share/fonts/truetype/dejavu
[ -f $font/DejaVuSans.ttf ] || { echo "SKIP: fonts-dejavu-core not installed"; exit 77; }

rm -rf "$out/calib" "$out/eval" "$out/work"
mkdir -p "$out/calib" "$out/eval" "$out/work"
work=$out/work

# ----------------------------------------------------------------- speech
# set|voice|words per minute|pitch|sentence
cat >"$work/speech.txt" <<'LIST'
calib|en-us+m3|160|50|The quick brown fox jumps over the lazy dog near the river bank.
calib|en+f2|140|70|Please turn on the kitchen lights and set the oven to two hundred degrees.
calib|en-gb-scotland+m1|175|40|What will the weather be like tomorrow morning in Edinburgh?
calib|en-029+f4|150|65|Remind me to call my sister after the football match tonight.
calib|en-gb-x-rp+m7|130|45|The committee has postponed its decision until the end of next month.
calib|en-us+f1|185|80|Hey computer, play some quiet piano music in the living room.
calib|en-gb-x-gbclan+m2|165|35|Seven hundred and twenty three people attended the concert on Saturday.
calib|en+m4|145|55|Could you read the last message from the delivery company again?
calib|en-us+f3|170|60|A large flock of geese flew south over the frozen lake at dawn.
calib|en-gb+m6|155|30|Set a timer for twelve minutes and wake me up if it starts raining.
calib|en-gb-x-gbcwmd+f2|135|75|The train to Birmingham departs from platform four at half past nine.
calib|en-us+m1|190|50|Open the garage door and switch off the alarm in the hallway.
calib|en-029+m5|150|42|My grandmother grew tomatoes, beans and sweet peppers in her garden.
calib|en-gb-scotland+f5|160|68|How many kilometres is it from the airport to the city centre?
calib|en-us+m7|140|38|Add milk, eggs, bread and two kilos of apples to the shopping list.
calib|en+f1|175|72|Stop the music, lower the blinds and lock the front door please.
eval|en-us+m2|150|45|Alexa, what time does the pharmacy on Main Street close today?
eval|en-gb+f4|165|70|Our flight was delayed by three hours because of the heavy snow.
eval|en-gb-x-rp+m3|140|52|Translate this sentence into French and send it to my colleague.
eval|en-029+f1|180|78|The children built a sandcastle that was taller than their father.
eval|en-gb-scotland+m6|135|33|Hey Jarvis, dim the bedroom lights to thirty percent.
eval|en-us+f4|155|66|Ninety nine red balloons drifted slowly across the summer sky.
eval|en-gb-x-gbclan+f3|170|58|The museum will be closed on Monday for maintenance work.
eval|en+m5|150|40|Start the vacuum cleaner in the kitchen while I am at work.
eval|en-us+m4|185|47|Scientists discovered a new species of frog in the rain forest.
eval|en-gb-x-gbcwmd+m1|145|36|Call the doctor and ask whether the test results have arrived.
eval|en+f3|160|74|How long should I boil an egg so that the yolk stays soft?
eval|en-gb+m2|130|44|The old lighthouse keeper wrote a letter every single evening.
eval|en-us+f2|175|62|Hey Mycroft, what is the square root of one hundred and forty four?
eval|en-029+m7|140|50|Please record the meeting and email the notes to everyone.
eval|en-gb-x-rp+f1|165|69|A thunderstorm knocked out the power in half of the town last night.
eval|en-us+m6|150|55|Turn up the heating in the study by two degrees.
LIST
n=0
: >"$work/calib.lst"
: >"$work/eval.lst"
while IFS='|' read -r set voice wpm pitch text; do
    n=$((n + 1))
    name=$(printf 'utt%02d' $n)
    espeak-ng -v "$voice" -s "$wpm" -p "$pitch" -w "$work/$name.22k.wav" "$text"
    # -D: no dither (dither would add noise); -R: repeatable
    sox -D -R "$work/$name.22k.wav" -r 16000 -c 1 -b 16 "$work/$name.wav" vol 0.8
    rm -f "$work/$name.22k.wav"
    echo "$name" >>"$work/$set.lst"
done <"$work/speech.txt"
node "$here/mel.js" "$models/melspectrogram.onnx" "$work" "$work"/utt*.wav
for set in calib eval; do
    $py "$here/gen_inputs.py" speech "$work" "$work/$set.lst" "$out/$set" 3
done

# -------------------------------------------------------------------- OCR
# Text lines: the calib and eval sets use other words and other fonts.
cat >"$work/calib.words" <<'LIST'
Invoice No. 4821
Total amount due
Main Street 17
Opening hours 9-18
Fresh bread daily
Please keep left
Exit
Platform 3
Parking for customers only
Date: 2024-03-15
Emergency exit
Room 204
Price per kilo 2.49
No smoking
Welcome to Berlin
Customer service
Order number 77015
Delivery address
Pull
Monday to Friday
Best before 12/09
Quantity
Tel. 0171 555 2301
Subtotal 83.20
LIST
cat >"$work/eval.words" <<'LIST'
Receipt 10932
Thank you for shopping
Station Road 5
Closed on Sundays
Organic vegetables
Keep door closed
Entrance
Gate B12
Staff only beyond this point
Due date 2025-11-30
First aid
Floor 7
Net weight 500 g
Wet paint
Harbour view hotel
Information desk
Ticket 4450-22
Billing name
Push
Saturday 10-14
Use by 03/04
Unit price
Fax 089 123 4567
VAT 19% 12.54
LIST
calib_fonts="DejaVuSans.ttf DejaVuSerif.ttf DejaVuSansMono.ttf DejaVuSans-Bold.ttf"
eval_fonts="DejaVuSansCondensed.ttf DejaVuSerif-Bold.ttf DejaVuSans-Oblique.ttf DejaVuSansMono-Bold.ttf"
colors="black:white navy:white black:#f2eedc white:#303030 #202020:#c8d8e8 darkred:#fffaf0"
pick() { # pick K WORDS...: the (K mod count)-th word
    k=$1; shift; eval "set -- $*"; i=$((k % $# + 1)); eval "echo \${$i}"
}
for set in calib eval; do
    fonts=$(eval echo \$${set}_fonts)
    k=0
    : >"$out/$set/ocr_rec.labels"
    while read -r text; do
        for rep in 0 1; do
            f=$(pick $((k + rep)) $fonts)
            c=$(pick $((k * 5 + rep * 3)) $colors)
            fg=${c%%:*}; bg=${c#*:}
            ps=$((18 + (k * 7 + rep * 11) % 27))
            name=$(printf 'line%02d_%d' $k $rep)
            rot=0
            # half of the cls samples are upside down (the class it tells)
            [ $(((k + rep) % 2)) = 1 ] && rot=180
            convert -background "$bg" -fill "$fg" -font "$font/$f" -pointsize $ps \
                label:"$text" -bordercolor "$bg" -border $((2 + k % 5))x$((2 + rep * 3)) \
                -depth 8 "$work/$set-$name.ppm"
            convert "$work/$set-$name.ppm" -rotate $rot -depth 8 "$work/$set-$name-rot.ppm"
            $py "$here/gen_inputs.py" image ocr_rec "$work/$set-$name.ppm" "$name" "$out/$set"
            printf '%s\t%s\n' "$name" "$text" >>"$out/$set/ocr_rec.labels"
            $py "$here/gen_inputs.py" image ocr_cls "$work/$set-$name-rot.ppm" "${name}_r$rot" "$out/$set"
        done
        k=$((k + 1))
    done <"$work/$set.words"
    # pages: three to five lines of the set's words at several sizes
    for p in $(seq 0 15); do
        f=$(pick $p $fonts)
        c=$(pick $((p * 5)) $colors)
        fg=${c%%:*}; bg=${c#*:}
        args=""
        y=$((30 + p % 3 * 8))
        lines=$((3 + p % 3))
        for l in $(seq 1 $lines); do
            ps=$((14 + (p * 3 + l * 5) % 20))
            text=$(sed -n "$(((p * 5 + l * 7) % 24 + 1))p" "$work/$set.words")
            x=$((8 + (p + l) % 4 * 12))
            args="$args -pointsize $ps -annotate +$x+$y '$text'"
            y=$((y + ps + 18 + l % 3 * 6))
        done
        name=$(printf 'page%02d' $p)
        eval convert -size 320x320 "xc:'$bg'" -fill "'$fg'" -font "$font/$f" $args -depth 8 "$work/$set-$name.ppm"
        $py "$here/gen_inputs.py" image ocr_det "$work/$set-$name.ppm" "$name" "$out/$set"
    done
done
rm -rf "$work"
# the float reference outputs of the eval sets
for m in embedding_model melspectrogram ocr_cls ocr_rec ocr_det; do
    node "$here/ort_eval.js" "$models/$m.onnx" "$models/$m.onnx" "$out/eval/$m" --save-ref >/dev/null
done
for set in calib eval; do
    for m in "$out/$set"/*/; do
        m=${m%/}
        echo "gen_data.sh: $m: $(ls "$m" | wc -l) samples"
    done
done
