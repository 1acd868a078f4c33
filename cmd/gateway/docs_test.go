package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/socialgw/gateway/cmd/internal/app"
)

// settingsOfBinaries returns every setting cmd/gateway and cmd/worker
// read, by variable. A variable both read must have one default.
func settingsOfBinaries(t *testing.T) map[string]app.Setting {
	t.Helper()
	all := map[string]app.Setting{}
	for _, s := range (&Config{}).settings() {
		all[s.Env] = s
	}
	for _, s := range (&app.WorkerConfig{}).Settings() {
		if g, ok := all[s.Env]; ok && g.Def != s.Def {
			t.Errorf("%s: default %q in the gateway, %q in the worker", s.Env, g.Def, s.Def)
		}
		if _, ok := all[s.Env]; !ok {
			all[s.Env] = s
		}
	}
	return all
}

var (
	// A table row whose first cell names variables: | `A`, `B` | … |
	rowRE = regexp.MustCompile("(?m)^\\|\\s*(`[A-Z][A-Z0-9_]*`(?:\\s*,\\s*`[A-Z][A-Z0-9_]*`)*)\\s*\\|([^|]*)\\|")
	// `VAR` (default 7) or `VAR` (200) in prose, across a line break.
	proseRE = regexp.MustCompile("`([A-Z][A-Z0-9_]*_[A-Z0-9_]*)`\\s*\\((?:default\\s+)?([^)]*)\\)")
	quoted  = regexp.MustCompile("`([^`]*)`")
	// What a default in parentheses looks like: 7, 1 000, 30s, 720h.
	defaultRE = regexp.MustCompile(`^[0-9][0-9 ]*[a-z]*$`)
)

// docDefault normalises a default as docs write it: "1 000" is 1000,
// "500 ms" is 500ms, "1 MiB" is 1048576.
func docDefault(s string) string {
	s = strings.NewReplacer(" ", "", "`", "").Replace(strings.TrimSpace(s))
	for unit, n := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20} {
		if v, ok := strings.CutSuffix(s, unit); ok {
			if x, err := strconv.Atoi(v); err == nil {
				return strconv.Itoa(x * n)
			}
		}
	}
	return s
}

// cellValues returns the values a table cell gives: its quoted values, or
// else its comma-separated parts ("32, 500 ms"), normalised.
func cellValues(cell string) (values []string, isQuoted bool) {
	if q := quoted.FindAllStringSubmatch(cell, -1); len(q) > 0 {
		for _, v := range q {
			values = append(values, docDefault(v[1]))
		}
		return values, true
	}
	for _, v := range strings.Split(cell, ",") {
		values = append(values, docDefault(v))
	}
	return values, false
}

// TestSettingsDocumented checks the settings tables of README.md and the
// docs against the settings the binaries read: every variable of
// cmd/gateway and cmd/worker has a row in README.md, every row names a
// variable a binary reads, and wherever a row or a sentence gives a
// variable's default, it is the default the code applies.
func TestSettingsDocumented(t *testing.T) {
	settings := settingsOfBinaries(t)
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{"../../README.md"}, docs...)
	inReadme := map[string]bool{}
	for _, file := range docs {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		name := filepath.Base(file)
		for _, m := range rowRE.FindAllStringSubmatch(text, -1) {
			vars := quoted.FindAllStringSubmatch(m[1], -1)
			defs, isQuoted := cellValues(m[2])
			for i, v := range vars {
				s, ok := settings[v[1]]
				if !ok {
					// Other tables (error codes) have upper-case first
					// cells too, but no quoted value beside them.
					if isQuoted {
						t.Errorf("%s: row %q names %s, which no binary reads", name, strings.TrimSpace(m[0]), v[1])
					}
					continue
				}
				if name == "README.md" {
					inReadme[v[1]] = true
				}
				// One value per variable, in order; or several for one
				// (`10000` (`75` with `DEMO`)).
				want := defs
				if len(defs) == len(vars) {
					want = defs[i : i+1]
				}
				switch {
				case s.Def == "" && isQuoted && len(vars) == 1:
					t.Errorf("%s: %s has no default, but the row gives %q", name, v[1], m[2])
				case s.Def != "" && !slices.Contains(want, s.Def):
					t.Errorf("%s: %s defaults to %q, but the row says %q", name, v[1], s.Def, strings.TrimSpace(m[2]))
				}
			}
		}
		for _, m := range proseRE.FindAllStringSubmatch(text, -1) {
			s, ok := settings[m[1]]
			if !ok || !defaultRE.MatchString(strings.Trim(m[2], " `")) {
				continue // not a setting, or not a default in parentheses
			}
			if got := docDefault(m[2]); got != s.Def {
				t.Errorf("%s: %q gives %s the default %s, the code %s", name, m[0], m[1], got, s.Def)
			}
		}
	}
	for env := range settings {
		if !inReadme[env] {
			t.Errorf("README.md has no row for %s (--%s)", env, settings[env].Flag)
		}
	}
}
