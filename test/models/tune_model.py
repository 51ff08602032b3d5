"""Small conv+matmul model for test/models/tune.sh, with its inputs and a
float64 numpy reference: Conv 3x3 (pad 1) + bias + Relu -> Conv 1x1, a
MatMul of a second input by a constant (packed-panel template), and a
grouped Conv 3x3 (group 4 of 3 output channels, stride 2) of the first input
(generic template: the packed one leaves groups of fewer than 8 output
channels to it).

    tune_model.py DIR   writes DIR/model.onnx, in0.bin, in1.bin, ref0..2.bin
"""
import sys, onnx, numpy as np
from onnx import helper, TensorProto, numpy_helper
out=sys.argv[1]
rng=np.random.default_rng(7)
W=rng.standard_normal((24,8,3,3)).astype(np.float32)*0.3
B=rng.standard_normal((24,)).astype(np.float32)
W2=rng.standard_normal((16,24,1,1)).astype(np.float32)*0.3
M=rng.standard_normal((40,36)).astype(np.float32)*0.3
WG=rng.standard_normal((12,2,3,3)).astype(np.float32)*0.3
inits=[numpy_helper.from_array(W,'W'),numpy_helper.from_array(B,'B'),numpy_helper.from_array(W2,'W2'),numpy_helper.from_array(M,'M'),numpy_helper.from_array(WG,'WG')]
nodes=[helper.make_node('Conv',['x','W','B'],['c'],pads=[1,1,1,1],name='conv3x3'),
 helper.make_node('Relu',['c'],['r'],name='relu'),
 helper.make_node('Conv',['r','W2'],['y1'],name='conv1x1'),
 helper.make_node('MatMul',['x2','M'],['y2'],name='mm'),
 helper.make_node('Conv',['x','WG'],['y3'],pads=[1,1,1,1],strides=[2,2],group=4,name='grouped')]
g=helper.make_graph(nodes,'g',[helper.make_tensor_value_info('x',TensorProto.FLOAT,[1,8,12,12]),helper.make_tensor_value_info('x2',TensorProto.FLOAT,[12,40])],
 [helper.make_tensor_value_info('y1',TensorProto.FLOAT,[1,16,12,12]),helper.make_tensor_value_info('y2',TensorProto.FLOAT,[12,36]),
 helper.make_tensor_value_info('y3',TensorProto.FLOAT,[1,12,6,6])],inits)
m=helper.make_model(g,opset_imports=[helper.make_opsetid('',13)]); m.ir_version=8
onnx.save(m,out+'/model.onnx')
x=rng.standard_normal((1,8,12,12)).astype(np.float32); x2=rng.standard_normal((12,40)).astype(np.float32)
xp=np.pad(x,((0,0),(0,0),(1,1),(1,1)))
c=np.zeros((1,24,12,12),np.float64)
for kh in range(3):
  for kw in range(3):
    c+=np.einsum('oc,nchw->nohw',W[:,:,kh,kw].astype(np.float64),xp[:,:,kh:kh+12,kw:kw+12])
c+=B[None,:,None,None]; r=np.maximum(c,0)
y1=np.einsum('oc,nchw->nohw',W2[:,:,0,0].astype(np.float64),r)
y2=x2.astype(np.float64)@M
y3=np.zeros((1,12,6,6))
for g in range(4):
  for kh in range(3):
    for kw in range(3):
      y3[:,3*g:3*g+3]+=np.einsum('oc,nchw->nohw',WG[3*g:3*g+3,:,kh,kw].astype(np.float64),xp[:,2*g:2*g+2,kh:kh+12:2,kw:kw+12:2])
x.tofile(out+'/in0.bin'); x2.tofile(out+'/in1.bin')
y1.astype(np.float32).tofile(out+'/ref0.bin'); y2.astype(np.float32).tofile(out+'/ref1.bin')
y3.astype(np.float32).tofile(out+'/ref2.bin')
