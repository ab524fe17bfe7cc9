# The rounds summary of tests/vm/run.sh --compare-cloud-init --rounds N: reads one line a
# round, "VMCUST_RUN CLOUD_INIT_RUN VMCUST_CPU CLOUD_INIT_CPU" (seconds; all four 0 when a
# side recorded nothing), prints each round's ratios, then the median of the rounds that
# have times, run time and CPU time each. A round without times is named and left out of
# the median, never counted as a ratio.
#   awk -v name=VMCUST -f tests/vm/rounds.awk TOTALS

# The median of a[1..n], sorted in place (n is a handful of rounds: insertion sort).
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

!($1 > 0 && $2 > 0 && $3 > 0 && $4 > 0) {
    printf "%s round %d: a side recorded no times\n", name, NR
    next
}

{
    n++
    run[n] = $2 / $1
    cpu[n] = $4 / $3
    printf "%s round %d: %.2f / %.2f s = 1/%.1f; CPU %.2f / %.2f s = 1/%.1f\n", name, NR, $1, $2, run[n], $3, $4, cpu[n]
}

END {
    if (n) printf "%s median of %d rounds: run time 1/%.1f, CPU time 1/%.1f (target at most 1/20)\n", name, n, median(run, n), median(cpu, n)
    else printf "%s: no round recorded times\n", name
}
