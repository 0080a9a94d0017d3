"""loopc.interpreter"""
