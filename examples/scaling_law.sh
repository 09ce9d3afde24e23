# Fit your own scaling law and test a prediction: a table of (n, seed, loss), an offset power law
# L = E + B n^(-α) with bootstrap intervals, and the test of α̂ against α_D = 2β/(2β+d) at d = 3, β = 1
# (0.4). The table is simulated here from that exponent with 1% noise and 5 seeds;
# put your own runs' table in its place.
python - <<'PY'
import numpy as np

rng = np.random.default_rng(0)
with open("runs.csv", "w") as f:
    f.write("n,seed,loss\n")
    for n in np.geomspace(1e3, 1e6, 7).round():
        for seed in range(5):
            loss = (1.2 + 30 * n ** -0.4) * np.exp(0.01 * rng.standard_normal())
            f.write(f"{int(n)},{seed},{loss:.5f}\n")
PY
head -4 runs.csv
tmcheck fit runs.csv --x n --y loss --form offset --d 3 --beta 1 --kind D --bootstrap 200 --coverage-reps 20
