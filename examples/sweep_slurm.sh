# A sweep on SLURM. A sweep is a directory: a plan of runs, one sub-directory per run, results written
# atomically; any executor runs it and any executor resumes it. On a cluster the same command takes
# --executor slurm (one array task per run, through submitit):
#
#   tmcheck sweep controls ctl --preset tiny --executor slurm --slurm-partition gpu --slurm-time 30
#
# The site is built where no slurmd runs, so this page runs the sweep with the local executor instead
# (one worker); the plan, the directory and the report are the same, and `sweep status` reads them alike.
tmcheck sweep controls ctl --preset tiny --workers 1 --bootstrap 100 --no-report
tmcheck sweep status ctl
ls ctl
