package operation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

func TestParseIdempotencyKey(t *testing.T) {
	cases := []struct {
		name, raw, want string
		ok              bool
	}{
		{"plain", "8e0f-4c1a", "8e0f-4c1a", true},
		{"structured-field string", `"8e0f-4c1a"`, "8e0f-4c1a", true},
		{"longest", strings.Repeat("k", MaxIdempotencyKey), strings.Repeat("k", MaxIdempotencyKey), true},
		{"empty", "", "", false},
		{"empty quoted", `""`, "", false},
		{"too long", strings.Repeat("k", MaxIdempotencyKey+1), "", false},
		{"space", "a b", "", false},
		{"quote inside", `a"b`, "", false},
		{"backslash", `a\b`, "", false},
		{"non-ASCII", "clé", "", false},
		{"control", "a\tb", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIdempotencyKey(tc.raw)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseIdempotencyKey(%q) = %q, %v; want %q, ok %v", tc.raw, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestKeepable(t *testing.T) {
	withCode := func(code string) *graphql.Response {
		return &graphql.Response{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "m", Extensions: map[string]any{"code": code}}}}
	}
	cases := []struct {
		name string
		resp *graphql.Response
		keep bool
		want string // the kept answer, when not the response itself
	}{
		{"cut off", nil, false, ""},
		{"success", &graphql.Response{Data: json.RawMessage(`{"createPost":{"id":"1"}}`)}, true, ""},
		{"user error", withCode("BAD_USER_INPUT"), true, ""},
		{"not found", withCode("NOT_FOUND"), true, ""},
		{"internal error", withCode("INTERNAL_SERVER_ERROR"), false, ""},
		{"refused budget", withCode("RATE_LIMITED"), false, ""},
		{"no code", &graphql.Response{Errors: gqlerror.List{{Message: "m"}}}, false, ""},
		{"too large", &graphql.Response{Data: json.RawMessage(`"` + strings.Repeat("x", MaxKeptAnswer) + `"`)}, true, string(tooLargeToKeep)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, keep := keepable(tc.resp)
			if keep != tc.keep {
				t.Fatalf("keep = %v, want %v", keep, tc.keep)
			}
			if tc.want != "" && string(got) != tc.want {
				t.Fatalf("kept %q, want %q", got, tc.want)
			}
			if keep && tc.want == "" {
				var back graphql.Response
				if err := json.Unmarshal(got, &back); err != nil || len(back.Errors) != len(tc.resp.Errors) {
					t.Fatalf("kept answer %s does not decode to the response: %v", got, err)
				}
			}
		})
	}
}
