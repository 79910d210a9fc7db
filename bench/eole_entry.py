"""eole's command line (`eole train|predict ...`) with two settings eole 0.6.4 has no option for.

Run with the eole venv's python by bench_multi30k.py and bench_inference.py:

    python bench/eole_entry.py --threads=2 --relu_dropout=0.1 -- train -config config.yaml

- `--threads N`: torch's intra-op threads (torch.set_num_threads) and one inter-op thread,
  as every system in bench_inference gets.
- `--relu_dropout P`: the dropout inside the feed-forward block, after its activation
  (T2T's relu_dropout, OpenNMT-tf's ffn_dropout). eole 0.6.4 applies its one `dropout`
  value to the sub-layer outputs, the embeddings and that inner activation alike
  (`TransformerMLP.dropout_1`); here the inner one gets P, at construction and whenever
  eole updates its dropouts (`dropout_steps`), and the others keep `dropout`.
- `--embedding_init_std S`: the word embeddings (one matrix here: source, target and
  softmax share it) drawn from normal(0, S) after eole's `param_init_method` initialized
  every weight: S = 256^-0.5 is t2t's symbol-modality initialization (an ablation of
  bench_multi30k.py, `--peer_embedding_init=t2t`).
- `--serve_batch_timeout T`: `eole serve`'s wait for more requests after a batch's first
  (bench/eole_serving.py, tuned). 0.6.4's server reads `batch_timeout` from a model's
  config, but the same config then goes to `PredictConfig`, which refuses the key: as
  shipped the wait is always 0.1 s.
"""
import argparse
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="0: torch's default")
    parser.add_argument("--relu_dropout", type=float, default=None,
                        help="the feed-forward block's inner dropout; default eole's dropout")
    parser.add_argument("--embedding_init_std", type=float, default=None,
                        help="word embeddings from normal(0, S); default eole's initialization")
    parser.add_argument("--serve_batch_timeout", type=float, default=None,
                        help="eole serve's batch wait in seconds; default eole's (0.1)")
    args, rest = parser.parse_known_args()
    if rest and rest[0] == "--":
        rest = rest[1:]
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
    if args.relu_dropout is not None:
        from eole.modules import transformer_mlp
        mlp = transformer_mlp.MLP
        relu_dropout = args.relu_dropout
        original_init, original_update = mlp.__init__, mlp.update_dropout

        def init(self, *a, **k):
            original_init(self, *a, **k)
            self.dropout_1.p = relu_dropout

        def update_dropout(self, dropout):
            original_update(self, dropout)
            self.dropout_1.p = relu_dropout

        mlp.__init__, mlp.update_dropout = init, update_dropout
    if args.embedding_init_std is not None:
        from eole.models import model as eole_model
        from eole.modules import embeddings as eole_embeddings
        std = args.embedding_init_std
        original_init_weights = eole_model.BaseModel.init_weights

        def init_weights(self, running_config):
            original_init_weights(self, running_config)
            for module in self.modules():
                if isinstance(module, eole_embeddings.Embeddings):
                    torch.nn.init.normal_(module.embeddings.weight, mean=0.0, std=std)

        eole_model.BaseModel.init_weights = init_weights
    if args.serve_batch_timeout is not None:
        from eole.server import model as server_model
        timeout, original_model_init = args.serve_batch_timeout, server_model.Model.__init__

        def model_init(self, *a, **k):
            original_model_init(self, *a, **k)
            self.batch_timeout = timeout

        server_model.Model.__init__ = model_init
    from eole.bin.main import main as eole_main
    sys.argv = ["eole"] + rest
    eole_main()


if __name__ == "__main__":
    main()
