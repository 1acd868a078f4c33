package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// With LOG_FORMAT=json every line is a JSON object, go-redis's included,
// and durations read as durations.
func TestJSONLogs(t *testing.T) {
	var buf bytes.Buffer
	c := &Common{LogFormat: "json", LogLevel: "info"}
	log, err := c.NewLogger(&buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("shutting down", "timeout", 15*time.Second)
	redisLogger{log}.Printf(context.Background(), "redis: connection pool: %s\n", "timeout")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["timeout"] != "15s" {
		t.Errorf("first line %s: %v", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil || second["component"] != "go-redis" || second["msg"] != "redis: connection pool: timeout" {
		t.Errorf("go-redis line %s: %v", lines[1], err)
	}
}
