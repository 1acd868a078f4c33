package httpapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// decodeBody decodes what encoding/json's Unmarshal into
// graphql.RawParams decodes, and refuses what it refuses, plus a member
// named twice.
func TestDecodeBody(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		dup        bool // refused as a member named twice
	}{
		{"query", `{"query":"{ a }"}`, false},
		{"all members", `{"query":"q","operationName":"A","variables":{"n":1,"s":"x"},"extensions":{"e":[1]}}`, false},
		{"nulls", `{"query":null,"variables":null,"extensions":null}`, false},
		{"null body", `null`, false},
		{"empty object", ` {} `, false},
		{"case-insensitive names", `{"QUERY":"q","Variables":{"a":1}}`, false},
		{"unknown members", `{"query":"q","x":{"y":[1,2]}}`, false},
		{"headers", `{"query":"q","headers":{"A":["b"]}}`, false},
		{"headers of the wrong type", `{"query":"q","headers":5}`, false},
		{"query of the wrong type", `{"query":5}`, false},
		{"variables of the wrong type", `{"query":"q","variables":[1]}`, false},
		{"an array", `[1]`, false},
		{"a string", `"q"`, false},
		{"trailing data", `{"query":"q"} x`, false},
		{"unterminated", `{"query":"q"`, false},
		{"empty", ``, false},
		{"trailing comma", `{"query":"q",}`, false},
		{"duplicate", `{"query":"a","query":"b"}`, true},
		{"duplicate in another case", `{"query":"a","Query":"b"}`, true},
		{"duplicate unknown member", `{"query":"a","x":1,"x":2}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeBody([]byte(tc.body))
			var dup duplicateMember
			if tc.dup {
				if !errors.As(err, &dup) {
					t.Fatalf("err %v, want a duplicate member", err)
				}
				return
			}
			var want graphql.RawParams
			wantErr := decodeJSON([]byte(tc.body), &want)
			if wantErr == nil {
				// As encoding/json's Unmarshal, which the transport used.
				wantErr = json.Unmarshal([]byte(tc.body), &graphql.RawParams{})
			}
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("err %v, encoding/json's %v", err, wantErr)
			}
			if err == nil {
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("got %+v, want %+v", *got, want)
				}
			}
		})
	}
}
