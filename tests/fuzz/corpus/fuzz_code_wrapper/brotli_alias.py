import brotli as B,base64 as b
exec(B.decompress(b.b85decode("8$bYXMK{-1l1;7Y_;Lh)!4DjA;Bv5ATZB0U8*m<T7~#aTr1l5zor$}cMMzCwTN|>cSt)VU0R")))
