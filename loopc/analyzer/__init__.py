"""loopc.analyzer"""
