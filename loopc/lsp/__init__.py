"""loopc.lsp"""
