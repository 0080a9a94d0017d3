"""loopc.ir"""
