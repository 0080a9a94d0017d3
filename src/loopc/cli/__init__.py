"""loopc.cli"""
