"""loopc.compiler"""
