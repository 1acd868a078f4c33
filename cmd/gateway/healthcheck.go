package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// defaultHealthURL is what `gateway healthcheck` probes without an
// argument: the readiness endpoint of a gateway on the default port.
const defaultHealthURL = "http://127.0.0.1:8080/readyz"

// healthTimeout bounds one probe: shorter than any orchestrator's.
const healthTimeout = 3 * time.Second

// healthcheck is the `healthcheck [URL]` subcommand: the probe of images
// that have no shell or curl (distroless). It succeeds (exit 0) when URL
// answers 200 within healthTimeout, and fails (exit 1) otherwise.
func healthcheck(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("healthcheck: want at most one URL, got %q", args)
	}
	url := defaultHealthURL
	if len(args) == 1 {
		url = args[0]
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
