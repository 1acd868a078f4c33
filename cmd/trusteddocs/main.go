// Command trusteddocs writes the trusted-documents manifest of a
// single-page app (TRUSTED_DOCUMENTS): the GraphQL operations its
// JavaScript sources hold, in Apollo's persisted-query manifest format.
//
//	go run ./cmd/trusteddocs examples/spa/src > examples/spa/trusted-documents.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/socialgw/gateway/internal/trusted"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: trusteddocs DIR (the app's JavaScript sources)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "trusteddocs:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	m, err := manifest(dir)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

// manifest extracts the operations of dir's *.js files.
func manifest(dir string) (*trusted.Manifest, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no .js file in %s", dir)
	}
	sources := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sources[filepath.Base(f)] = string(b)
	}
	return trusted.Extract(sources)
}
