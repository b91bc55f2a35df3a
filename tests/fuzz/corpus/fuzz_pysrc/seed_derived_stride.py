class Loader:
    def __init__(self, num_shards, seed):
        salt = seed * 41 + 3
        self.batch_shard_stride = choose_coprime_stride(num_shards, salt)
        print(f"cache:{self.cache} batch_stride:{self.batch_shard_stride} ")
