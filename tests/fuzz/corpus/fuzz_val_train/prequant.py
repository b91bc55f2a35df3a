def prequant_ttt_adapt_adamw(
    h: Hyperparameters, base_model: nn.Module, device: torch.device,
    val_tokens: Tensor, rank: int = 0, world_size: int = 1,
) -> None:
    """AdamW TTT: fine-tune on val data BEFORE quantization."""
    seq_len = h.train_seq_len
    log(f"prequant_ttt:params trainable={n}")
    optimizer = torch.optim.AdamW(ttt_params, lr=h.prequant_ttt_lr)
    for epoch in range(h.prequant_ttt_epochs):
        epoch_loss_sum = torch.zeros((), device=device)
        for bs in range(my_start, my_end, batch_seqs):
            local = val_tokens[raw_start:raw_end].to(device=device, dtype=torch.int64)
            x = local[:-1].reshape(-1, seq_len)
            y = local[1:].reshape(-1, seq_len)
            loss = base_model(x, y)
            loss.backward()
            optimizer.step()
            epoch_loss_sum += loss.detach()
        log(f"prequant_ttt:epoch {epoch+1}/{h.prequant_ttt_epochs} loss:{avg:.4f}")
def train_and_eval(h, device):
    val_data = ValidationData(h, device)
    if h.prequant_ttt_enabled:
        log(f"prequant_ttt:start lr={h.prequant_ttt_lr} epochs={h.prequant_ttt_epochs}")
        prequant_ttt_adapt_adamw(
            h, base_model, device, val_data.val_tokens,
            rank=h.rank, world_size=h.world_size,
        )
    timed_eval("quantized_sliding_window", eval_val_sliding, h, device, val_data)
