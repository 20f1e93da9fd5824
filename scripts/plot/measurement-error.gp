# The measurement error: per market data message, the switch latency
# tapless measured from the hosts' stamps minus the truth for the same
# frame (the switch emulator's own egress - ingress stamps). Left, per
# rate: box p25-p75, bar p50, whiskers p1-p99, inside a grey band of +/-
# the error bound the samples came with (p50), labelled with the share of
# samples inside their own bound (and, in red, a rate the venue could not
# send at: the rate it did). Right: the error's CDF per rate, the
# bounds dashed, on an axis no wider than twice the bounds (the tails beyond
# are off it: the curve's height at its edges says how much). Reads data/rates.dat (by column name) and
# data/cdf-error-RATE.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
rates = '@RATES_ERROR@'
bounds = '@BOUNDS@'
logx = @LOGX_RATE@
rmin = @RATE_MIN@
rmax = @RATE_MAX@
emin = @ERR_XMIN@
emax = @ERR_XMAX@
cmin = @ERR_CDF_XMIN@
cmax = @ERR_CDF_XMAX@
set datafile missing '-'
# Boxes around each rate: a share of it on a log axis, of the axis else.
bw(x) = logx ? x * 0.3 : (rmax - rmin) / 20
band(x) = logx ? x * 0.25 : (rmax - rmin) / 16

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1400,680 enhanced font 'sans,10'
	} else {
		set terminal svg size 1400,680 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,2 title title margins 0.06,0.98,0.24,0.9 spacing 0.07
	set label 100 caption at screen 0.01, screen 0.14 left noenhanced font ',9'
	set grid
	set key top left

	set title 'Error per sample: tapless - truth (switch latency)'
	set xlabel 'market data rate (messages/s)'
	set ylabel 'error (ns)'
	set xrange [rmin:rmax]
	if (logx) { set logscale x } else { unset logscale x }
	set yrange [emin:emax]
	set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead dt 3 lc rgb 'black'
	set datafile columnheaders
	plot 'data/rates.dat' using (column('rate')):(0):(column('rate') - band(column('rate'))):(column('rate') + band(column('rate'))):(-column('bound_p50')):(column('bound_p50')) \
		with boxxyerror fs solid 0.25 noborder lc rgb 'gray50' title '± error bound (p50)', \
	     '' using (column('rate')):(column('error_p25')):(column('error_p1')):(column('error_p99')):(column('error_p75')):(bw(column('rate'))) \
		with candlesticks whiskerbars fs solid 0.5 lc rgb 'steelblue' lw 1.5 title 'error p25-p75, whiskers p1-p99', \
	     '' using (column('rate')):(column('error_p50')):(column('error_p50')):(column('error_p50')):(column('error_p50')):(bw(column('rate'))) \
		with candlesticks lc rgb 'black' lw 2.5 title 'p50', \
	     '' using (column('rate')):(-column('bound_p50')):(sprintf('%.1f %% inside', column('coverage_switch'))) \
		with labels offset 0, -0.8 font ',9' notitle, \
	     '' using (column('rate')):(-column('bound_p50')):(column('sent_rate') < 0.95 * column('rate') ? sprintf('capped: %.1fk/s sent', column('sent_rate') / 1e3) : '') \
		with labels offset 0, -1.8 font ',9' tc rgb 'red' notitle
	set datafile nocolumnheaders
	unset arrow 1
	unset label 100

	set title 'Error per sample, cumulative (within twice the bounds)'
	set xlabel 'error: tapless - truth (ns)'
	set ylabel 'fraction of samples at or below'
	unset logscale x
	set xrange [cmin:cmax]
	set yrange [0:1]
	set key bottom right
	do for [i = 1:words(bounds)] {
		b = word(bounds, i) + 0
		if (b > 0) {
			set arrow 10 + 2 * i from first -b, graph 0 to first -b, graph 1 nohead dt 2 lc i
			set arrow 11 + 2 * i from first b, graph 0 to first b, graph 1 nohead dt 2 lc i
		}
	}
	plot for [i = 1:words(rates)] sprintf('data/cdf-error-%s.dat', word(rates, i)) \
		using 1:2 with steps lw 2 lc i title sprintf('%s msg/s', word(rates, i))
	unset arrow
	unset multiplot
	set output
}
