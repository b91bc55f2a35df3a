import os,sys
class H:
    a=1
    def f(self):
        if x: from m import y; return y
"""doc"""
