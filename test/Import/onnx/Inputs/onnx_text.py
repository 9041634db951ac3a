"""Writes the binary ONNX model of an ONNX text-format file (onnx.parser):
the lit tests keep their models readable.  usage: onnx_text.py IN.onnxtxt OUT.onnx"""

import sys

import onnx
import onnx.parser

onnx.save(onnx.parser.parse_model(open(sys.argv[1]).read()), sys.argv[2])
