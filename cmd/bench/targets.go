package main

import (
	"fmt"
	"strings"
)

// Target is one target and whether the run met it.
type Target struct {
	Name, Measured string
	Met            string // "yes", "no", or why it could not be judged
}

// Targets judges the run against the targets on throughput, latency,
// fan-out and memory: the gateway against the store's own page fetch, fan-out against raw pipelined writes, createPost
// with and without followers, and bytes per home-timeline entry.
func (r *Report) Targets() []Target {
	var out []Target
	if gw, ok := r.Reads.Get("gateway", 1); ok {
		st, _ := r.Reads.Get("store", 1)
		x := float64(gw.P50) / float64(st.P50)
		out = append(out, Target{"gateway p50 at concurrency 1 ≤ 3× the direct store fetch",
			fmt.Sprintf("%.1f× (%s vs %s)", x, ms(gw.P50), ms(st.P50)), yes(x <= 3)})
	}
	if f := r.Fanout; f != nil {
		fo, raw := median(f.FanoutTime), median(f.RawLPush)
		x := float64(fo) / float64(raw)
		out = append(out, Target{fmt.Sprintf("fan-out to %d followers ≤ 2× the raw pipelined LPUSH", f.Followers),
			fmt.Sprintf("%.1f× (%s vs %s LPUSH; %s ZADD)", x, ms(fo), ms(raw), ms(median(f.RawZAdd))), yes(x <= 2)})
		q, c := quantile(f.CreateQuiet, .5), quantile(f.CreateCeleb, .5)
		x = float64(c) / float64(q)
		out = append(out, Target{fmt.Sprintf("createPost latency the same with 0 or %d followers (p50 within 25%%)", f.Followers),
			fmt.Sprintf("%.2f× (%s vs %s)", x, ms(c), ms(q)), yes(x <= 1.25 && x >= 0.8)})
	}
	if e := r.Entry; e != nil {
		out = append(out, Target{"≤ 20 bytes per home-timeline entry at the cap",
			fmt.Sprintf("%.1f bytes", e.AtCap), yes(e.AtCap <= 20)})
	}
	return out
}

// RedisTargets judges the run against the targets on Redis's work: the
// Redis calls a request costs (costTargets), with the gateway's throughput
// against Redis alone serving the same pages (the raw replay) reported
// beside them. That ratio is not judged here: the target is against the
// flights of the page before its lean layout, which only an older build
// records (docs/performance.md, "The gateway against Redis alone"). The
// fan-out target is judged with the other fan-out figures, in Targets.
func (r *Report) RedisTargets() []Target {
	var out []Target
	if gw, ok := r.Reads.Get("gateway", r.Config.Concurrency); ok {
		if rp, ok := r.Reads.Get("replay", r.Config.Concurrency); ok {
			x := gw.PagesPerSec() / rp.PagesPerSec()
			m := fmt.Sprintf("%.2f× (%.0f vs %.0f pages/s); Redis CPU a page %.0f vs %.0f µs", x, gw.PagesPerSec(), rp.PagesPerSec(),
				us(gw.RedisCPU), us(rp.RedisCPU))
			if bg, br := gw.CPUBound(r.Machine.NProc), rp.CPUBound(r.Machine.NProc); bg > 0 && br > 0 {
				m += fmt.Sprintf("; by CPU per page, %d otherwise idle cores would allow %.2f× (%.0f vs %.0f)", r.Machine.NProc, bg/br, bg, br)
			}
			out = append(out, Target{"gateway pages/s at saturation against Redis alone serving the same pages' flights (raw replay)",
				m, "reported"})
		}
	}
	if cs := r.Costs; cs != nil {
		out = append(out, costTargets(cs)...)
	}
	return out
}

// costTargets judges the read-path costs: round trips that do not grow
// with the page size, and commands that follow the page rather than the
// pulled authors.
func costTargets(cs *Costs) []Target {
	var out []Target
	if n := len(cs.Nested); n > 1 {
		var rts []string
		for _, c := range cs.Nested {
			rts = append(rts, fmt.Sprint(c.roundTrips))
		}
		// Constant: no page costs more round trips than the one of 5 posts
		// (a one-post page may skip a level, having no likers, say).
		ok := true
		for _, c := range cs.Nested[1:] {
			ok = ok && c.roundTrips <= cs.Nested[1].roundTrips
		}
		out = append(out, Target{fmt.Sprintf("round trips per page constant for first = %s with nested likers and author followers", joinInts(nestedFirsts)),
			strings.Join(rts, ", "), yes(ok)})
	}
	for _, pc := range cs.Pulled {
		limit := 2*pc.One.commands + 2*int64(pc.ManyAuthors)
		out = append(out, Target{fmt.Sprintf("%s: commands of a 20-post page following %d pulled authors ≤ 2× those of 1 + 2 per author", pc.Mode, pc.ManyAuthors),
			fmt.Sprintf("%d vs limit %d (1 author: %d)", pc.Many.commands, limit, pc.One.commands), yes(pc.Many.commands <= limit && pc.OnePosts == 20 && pc.ManyPosts == 20)})
	}
	return out
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// targetsTable renders targets under a heading, if there are any.
func targetsTable(p printer, heading string, ts []Target) {
	if len(ts) == 0 {
		return
	}
	p(heading)
	p("")
	p("| target | measured | met |")
	p("|---|---|---|")
	for _, x := range ts {
		p("| %s | %s | %s |", x.Name, x.Measured, x.Met)
	}
	p("")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
