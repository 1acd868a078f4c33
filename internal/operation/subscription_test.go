package operation_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestOneSubscriptionField: a subscription selecting one root field twice
// under two aliases passes gqlparser's validation (its rule compares
// names, not response keys); the rules must refuse it as a validation
// error rather than let execution fail it as an internal error, which is
// logged. Sent over SSE, anonymous, so that a document let through ends
// at once with UNAUTHENTICATED.
func TestOneSubscriptionField(t *testing.T) {
	s := gatewaytest.New(t)
	tests := []struct {
		name string
		doc  string
		vars map[string]any
		want string
	}{
		{"one field", `subscription { notificationAdded { id } }`, nil, "UNAUTHENTICATED"},
		{"two aliases of one field", `subscription { a: notificationAdded { id } b: notificationAdded { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"aliases through a fragment", `subscription { a: timelineUpdated { id } ...F } fragment F on Subscription { b: timelineUpdated { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"the same key twice", `subscription { notificationAdded { id } notificationAdded { id } }`, nil, "UNAUTHENTICATED"},
		{"the second one left out", `subscription($x: Boolean!) { a: notificationAdded { id } b: notificationAdded @include(if: $x) { id } }`, map[string]any{"x": false}, "UNAUTHENTICATED"},
		{"the second one included", `subscription($x: Boolean!) { a: notificationAdded { id } b: notificationAdded @include(if: $x) { id } }`, map[string]any{"x": true}, "GRAPHQL_VALIDATION_FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, event := sseFirstCode(t, s.URL, tt.doc, tt.vars); got != tt.want {
				t.Errorf("code %s, want %s (%s)", got, tt.want, event)
			}
		})
	}
}

// sseFirstCode sends a subscription over SSE and returns the code of the
// first error of its first event, and the event.
func sseFirstCode(t *testing.T, url, doc string, vars map[string]any) (string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var r gatewaytest.Response
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		return r.Code(), data
	}
	t.Fatalf("status %d: no event", res.StatusCode)
	return "", ""
}
