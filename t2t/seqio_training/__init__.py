"""Training, decoding and evaluating t2t models on SeqIO Tasks and Mixtures.

`problem_tasks` (a registered T2T Problem's data as a Task: `add_t2t_problem_task`),
`task_problem` (a Task/Mixture as the Problem a model trains on, through a feature
converter), `inference` (checkpoint-backed seqio predict/score functions, decoding a
task's split or a file), `training` (the experiment, with the tasks' metrics written at
each evaluation). The programs (`t2t-trainer/t2t-decoder --mixture_or_task_name`) call
these.
"""
