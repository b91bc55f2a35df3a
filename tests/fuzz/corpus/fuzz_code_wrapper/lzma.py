import lzma as L,base64 as B
exec(L.decompress(B.b85decode("0123456789abcdefghij")))
