// Package app holds what the gateway and worker commands share: settings
// read from flags with environment-variable fallbacks, the settings both
// commands must agree on (timelines and fan-out), logging, and the fan-out
// worker's wiring. Only commands import it.
package app

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Setting is one configuration value: its flag, its variable and its
// default, bound to a field by Set.
type Setting struct {
	Flag, Env, Def, Usage string
	Set                   func(string) error
	// Bool settings are boolean flags: --demo alone means --demo=true.
	Bool bool
}

// Parse applies the defaults, then the environment, then the flags of
// args to the settings, and returns the variables of the settings given
// explicitly (by the environment or a flag), for defaults that depend on
// other settings. --help prints every setting with its variable and
// default, and returns flag.ErrHelp.
func Parse(command string, list []Setting, args []string, getenv func(string) string, out io.Writer) (explicit map[string]bool, err error) {
	explicit = map[string]bool{}
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(out)
	for _, s := range list {
		usage := fmt.Sprintf("%s (env %s, default %q)", s.Usage, s.Env, s.Def)
		set := func(v string) error {
			explicit[s.Env] = true
			return s.Set(v)
		}
		if s.Bool {
			fs.BoolFunc(s.Flag, usage, set)
		} else {
			fs.Func(s.Flag, usage, set)
		}
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: %s [flags]\n\nEvery flag can also be set by the environment variable named with it; a flag wins over the variable.\n\nFlags:\n", command)
		fs.PrintDefaults()
	}
	for _, s := range list {
		if err := s.Set(s.Def); err != nil {
			return nil, fmt.Errorf("default of --%s: %w", s.Flag, err)
		}
		if v := getenv(s.Env); v != "" {
			explicit[s.Env] = true
			if err := s.Set(v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Env, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return explicit, nil
}

// String binds a string setting.
func String(p *string, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Set: func(v string) error { *p = v; return nil }}
}

// Bool binds a boolean setting.
func Bool(p *bool, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Bool: true, Set: func(v string) error {
		b, err := strconv.ParseBool(v)
		*p = b
		return err
	}}
}

// Duration binds a duration setting ("30s", "2m").
func Duration(p *time.Duration, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Set: func(v string) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	}}
}

// Int binds an integer setting.
func Int(p *int, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Set: func(v string) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	}}
}

// Int64 binds a 64-bit integer setting.
func Int64(p *int64, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Set: func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	}}
}

// List binds a comma-separated list; blank items are dropped.
func List(p *[]string, fl, env, def, usage string) Setting {
	return Setting{Flag: fl, Env: env, Def: def, Usage: usage, Set: func(v string) error {
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}}
}
