def eval_val_ttt(model, val_tokens, base_bytes_lut):
    for ci in range(8):
        with torch.no_grad():
            nll = model(val_tokens[ci * 8:ci * 8 + 9])
        for ep in range(3):
            model(val_tokens[ci * 8:ci * 8 + 9]).backward()
            opt.step()
        print(f"ttt_chunk:{ci}")
eval_val_ttt(model, val_tokens, base_bytes_lut)
