# Build and check a Lemma 1 network: the paper's piecewise-constant approximation of f on [0,1]^d, built
# in exact arithmetic. The command builds it, runs check_construction (shapes, rows that must not change,
# exactness against the claim, the weight bound, exact and float64 backends agreeing), measures
# max |T - f| against ε and counts every resource from the weights against the paper's formulas.
tmcheck lemma 1 --d 2 --eps 0.25 --target "sin(3*x0)*x1" --H-f 3
