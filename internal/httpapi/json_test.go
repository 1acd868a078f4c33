package httpapi

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// repeatedName finds a member named twice in one object at any depth,
// and only that: the same name in two objects, in an array's objects or
// in another case is no repetition.
func TestRepeatedName(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       duplicateMember
	}{
		{"none", `{"query":"q","variables":{"n":"alice","m":"bob"}}`, ""},
		{"top level", `{"query":"a","query":"b"}`, "/query"},
		{"in the variables", `{"query":"q","variables":{"n":"alice","n":"bob"}}`, "/variables/n"},
		{"in a nested object", `{"variables":{"i":{"a":{"b":1,"c":2,"b":3}}}}`, "/variables/i/a/b"},
		{"in an array's object", `{"variables":{"l":[{"x":1},{"x":2,"x":3}]}}`, "/variables/l/1/x"},
		{"in an array of arrays", `[[{"k":1,"k":1}]]`, "/0/0/k"},
		{"same name in sibling objects", `{"a":{"n":1},"b":{"n":2},"c":[{"n":3},{"n":4}]}`, ""},
		{"same name at two depths", `{"n":{"n":{"n":1}}}`, ""},
		{"names differing in case", `{"variables":{"n":1,"N":2}}`, ""},
		{"names equal once unescaped", `{"variables":{"n":1,"\u006e":2}}`, "/variables/n"},
		{"a name with a slash", `{"variables":{"a/b":1,"a/b":2}}`, "/variables/a~1b"},
		{"not JSON", `{"a":1,"b"`, ""},
		{"empty", ``, ""},
		{"a scalar", `5`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := repeatedName([]byte(tc.json)); got != tc.want {
				t.Errorf("repeatedName(%s) = %q, want %q", tc.json, string(got), string(tc.want))
			}
		})
	}
}

// A member named twice anywhere in a request is refused with 400
// BAD_USER_INPUT on every HTTP transport, saying which, and nothing of
// it is passed on.
func TestDuplicateMembersRefused(t *testing.T) {
	multipartBody := func(operations, fileMap string) (string, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.WriteField("operations", operations)
		mw.WriteField("map", fileMap)
		fw, _ := mw.CreateFormFile("0", "a.png")
		fw.Write([]byte("x"))
		mw.Close()
		return mw.FormDataContentType(), b.String()
	}
	ops := `{"query":"mutation($f: Upload){ a(f: $f) }","variables":{"f":null,"i":{"n":1,"n":2}}}`
	mpType, mpBody := multipartBody(ops, `{"0":["variables.f"]}`)
	mapType, mapBody := multipartBody(`{"query":"q","variables":{"f":null,"g":null}}`, `{"0":["variables.f"],"0":["variables.g"]}`)
	for _, tc := range []struct {
		name, method, contentType, body, query, want string
	}{
		{"POST variables", "POST", "application/json", `{"query":"q","variables":{"n":"alice","n":"bob"}}`, "", `"n" appears twice in the request's /variables`},
		{"POST nested", "POST", "application/json", `{"query":"q","variables":{"i":{"l":[{"a":1,"a":2}]}}}`, "", `"a" appears twice in the request's /variables/i/l/0`},
		{"POST extensions", "POST", "application/json", `{"query":"q","extensions":{"persistedQuery":{"version":1,"version":2}}}`, "", `"version" appears twice`},
		{"GET variables", "GET", "", "", "query=q&variables=" + url.QueryEscape(`{"n":"alice","n":"bob"}`), `"n" appears twice in the request's /variables`},
		{"GET extensions", "GET", "", "", "query=q&extensions=" + url.QueryEscape(`{"a":{"b":1,"b":1}}`), `"b" appears twice in the request's /extensions/a`},
		{"multipart operations", "POST", mpType, mpBody, "", `"n" appears twice in the request's /variables/i`},
		{"multipart map", "POST", mapType, mapBody, "", `the map part: the member "0" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &ok{}
			r := httptest.NewRequest(tc.method, "/query?"+tc.query, strings.NewReader(tc.body))
			r.Header.Set("GraphQL-Require-Preflight", "1")
			r.Header.Set("Authorization", "Bearer good")
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			w := httptest.NewRecorder()
			readParams(1<<20, newBodyBudget(0, 1<<20), bodyPace{}, uploadCheck{Uploads: Uploads{TempDir: t.TempDir()}, authn: authOf{}})(next).ServeHTTP(w, r)
			var res struct {
				Errors []struct {
					Message    string
					Extensions struct{ Code string }
				}
			}
			_ = json.Unmarshal(w.Body.Bytes(), &res)
			if next.ran || w.Code != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "BAD_USER_INPUT" ||
				!strings.Contains(res.Errors[0].Message, tc.want) {
				t.Fatalf("ran %v, status %d (%s); want 400 BAD_USER_INPUT saying %s", next.ran, w.Code, w.Body, tc.want)
			}
		})
	}
}
