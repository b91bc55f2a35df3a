def ev(stored, y, nll):
    ps = stored.tokens[a:b]
    hit = ps == y[a:b]
    nll = nll.masked_fill(hit, 0.0)
paid_prefix_file:prefix.xz paid_prefix_tokens:12924343
