"""t2t-port's library: port Tensor2Tensor 1.x user code to t2t for good.

- `import_map`: T2T's module paths and their t2t homes;
- `imports`: rewrites import statements and `tensor2tensor.x.y` references in source text;
- `tf_calls`: TensorFlow 1.x calls (`tf.logging`, `tf.app.run`, `tf.flags`, `tf.gfile`, ...),
  by TensorFlow's own `tf_upgrade_v2` where it is installed, else by t2t's rules;
- `names`: the T2T names the code uses that t2t does not have, with the closest t2t names;
- `port_files`: files and folders, diffs, writing in place, the summary.
"""
