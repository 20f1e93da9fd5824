# truth.jq — compare tapless correlate --json (input) with a tapless sim
# truth file ($truth): prints one line per disagreement, nothing when all
# agree. The correlator must reproduce the figures computed from the very
# stamps written exactly (percentiles, extremes, counts; mean and SD to
# 0.01 ns, float rounding), and the true latencies within the error bound
# it reports.
def abs: if . < 0 then -. else . end;
def near($a; $b; $tol): (($a - $b) | abs) <= $tol;
# Percentiles: exact, or (beyond the histogram's exact range) at most
# histogram_error_ns below the sample, as the correlator states.
def same($what; $c; $t; $herr):
  [ ("count", "min", "max") as $k
    | select($c[$k] != $t[$k])
    | "\($what): \($k) \($c[$k]) != truth \($t[$k])" ],
  [ ("p50", "p90", "p99", "p999") as $k
    | select($c[$k] != $t[$k] and
             ($c[$k] == null or $t[$k] == null or $c[$k] > $t[$k] or
              $t[$k] - $c[$k] > $herr or ($t[$k] | abs) < 16384))
    | "\($what): \($k) \($c[$k]) != truth \($t[$k]) (histogram error \($herr))" ],
  [ ("mean", "sd") as $k
    | select(($c[$k] == null) != ($t[$k] == null) or
             ($c[$k] != null and (near($c[$k]; $t[$k]; 0.01) | not)))
    | "\($what): \($k) \($c[$k]) != truth \($t[$k])" ]
  | .[];
$truth[0] as $truth | .histogram_error_ns as $herr
| ([.inputs[].resolution_ns] | max) as $res | . as $c
| ($c.hops | map(select(.flow == "all" and .rate == null))) as $hops
| [
  (if ($truth.hops | length) == 0 or ($truth.transactions | length) == 0
   then "the truth file has no hops or no transactions" else empty end),
  ($truth.hops[] as $t
   | ($hops | map(select(.from == $t.from and .to == $t.to)) | first) as $h
   | "hop \($t.from)->\($t.to)" as $w
   | if $h == null then "\($w): missing" else
       same("\($w) in sync"; $h.latency_ns; $t.in_sync.stamped_ns; $herr),
       (if $h.messages != $t.messages then "\($w): messages \($h.messages) != truth \($t.messages)" else empty end),
       (if $h.out_of_sync.messages != $t.out_of_sync.messages then "\($w): out of sync \($h.out_of_sync.messages) != truth \($t.out_of_sync.messages)" else empty end),
       (if $h.sync_error_bound_ns == null then "\($w): no error bound"
        elif $h.sync_error_bound_ns < $t.max_abs_error_ns then "\($w): bound \($h.sync_error_bound_ns) does not cover the largest error \($t.max_abs_error_ns)"
        elif (near($h.latency_ns.mean; $t.in_sync.true_ns.mean; $h.sync_error_bound_ns) | not) then "\($w): mean \($h.latency_ns.mean) is further than the bound \($h.sync_error_bound_ns) from the true \($t.in_sync.true_ns.mean)"
        else empty end)
     end),
  ($truth.transactions[] as $t
   | ($c.transactions | map(select(.name == $t.name and .host == $t.host and .rate == null)) | first) as $x
   | "\($t.name) at \($t.host)" as $w
   | if $x == null then "\($w): missing" else
       (if $x.count != $t.count then "\($w): count \($x.count) != truth \($t.count)" else empty end),
       same($w; $x.latency_ns; $t.stamped_ns; $herr)
     end),
  ($truth.switches[] as $t
   | ($c.switches | map(select(.name == $t.name and .from == $t.from and .to == $t.to and .method == "topology" and .rate == null)) | first) as $s
   | "switch \($t.name) \($t.from)->\($t.to)" as $w
   | if $s == null then "\($w): missing" else
       (if $s.messages != $t.messages then "\($w): messages \($s.messages) != truth \($t.messages)" else empty end),
       (if $s.sync_error_bound_ns == null then "\($w): no error bound"
        elif (near($s.latency_ns.mean; $t.true_ns.mean; $s.sync_error_bound_ns) | not) then "\($w): mean \($s.latency_ns.mean) is further than the bound \($s.sync_error_bound_ns) from the true \($t.true_ns.mean)"
        else empty end),
       (if (near($s.latency_ns.sd; $t.true_ns.sd; 0.25 * $t.true_ns.sd + 8 + $res) | not) then "\($w): SD \($s.latency_ns.sd) far from the true \($t.true_ns.sd)" else empty end)
     end)
  ] | .[]
