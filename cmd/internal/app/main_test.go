package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestCodeFollowsLogFormat: the error that stops a command is a log line
// in the format its settings ask for, PRODUCTION's default included.
func TestCodeFollowsLogFormat(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		hasProduction bool
		json          bool
	}{
		{"default", nil, nil, true, false},
		{"LOG_FORMAT=json", nil, map[string]string{"LOG_FORMAT": "json"}, false, true},
		{"PRODUCTION=true", nil, map[string]string{"PRODUCTION": "true"}, true, true},
		{"PRODUCTION=1 with text asked for", nil, map[string]string{"PRODUCTION": "1", "LOG_FORMAT": "text"}, true, false},
		{"--production alone", []string{"--production"}, nil, true, true},
		{"--production=false over the variable", []string{"--production=false"}, map[string]string{"PRODUCTION": "true"}, true, false},
		{"-log-format json", []string{"-log-format", "json"}, nil, false, true},
		{"--log-format=text over the variable", []string{"--log-format=text"}, map[string]string{"LOG_FORMAT": "json"}, false, false},
		{"a command without PRODUCTION", nil, map[string]string{"PRODUCTION": "true"}, false, false},
		{"an unknown format", nil, map[string]string{"LOG_FORMAT": "xml"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code := Code("cmd", tt.hasProduction, tt.args, func(k string) string { return tt.env[k] }, &out,
				func(context.Context, []string) error {
					return errors.Join(errors.New("first problem"), errors.New("second"))
				})
			line := strings.TrimSuffix(out.String(), "\n")
			if code != 1 || strings.Count(line, "\n") != 0 || !strings.Contains(line, "first problem") {
				t.Fatalf("code %d, output %q: want 1 and one line", code, out.String())
			}
			var rec map[string]any
			isJSON := json.Unmarshal([]byte(line), &rec) == nil
			if isJSON != tt.json || !isJSON && !strings.HasPrefix(line, "time=") {
				t.Errorf("output %q: JSON %v, want %v", line, isJSON, tt.json)
			}
			if isJSON && (rec["level"] != "ERROR" || rec["msg"] != "cmd stopped") {
				t.Errorf("record %v", rec)
			}
		})
	}
}
