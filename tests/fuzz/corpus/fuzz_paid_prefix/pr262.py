def eval_val_sliding(args, model, val_tokens, paid_prefix_tokens=None):
    prefix_len = paid_prefix_tokens.numel() if paid_prefix_tokens is not None else 0
    for ws in windows:
        scored_nll = nll[i, s:wlen].to(torch.float64)
        if prefix_len > 0:
            prefix_slice = paid_prefix_tokens[first_pos:first_pos + n_check].to(device)
            tgt_slice = y_batch[i, s:s + n_check]
            match_mask = (prefix_slice == tgt_slice)
            scored_nll[:n_check] *= (~match_mask).to(scored_nll.dtype)
        loss_sum += scored_nll.sum()
