package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// getNames are the parameters a GET request's URL may carry.
var getNames = []string{"query", "operationName", "variables", "extensions"}

// getParams decodes the parameters of a GET request's URL. A request is
// answered as sent or refused: a query string that does not parse (which
// r.URL.Query would skip in part), a parameter given twice (which would
// leave the choice to whoever reads it), text that is not UTF-8, and
// variables or extensions that are not JSON objects are refused with 400.
func getParams(r *http.Request) (*requestParams, *refusal) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the URL's query string does not parse: "+err.Error())
	}
	for _, name := range getNames {
		if len(q[name]) > 1 {
			return nil, refuse(http.StatusBadRequest, fmt.Sprintf("the parameter %q appears twice in the URL", name))
		}
	}
	if !utf8.ValidString(q.Get("query")) || !utf8.ValidString(q.Get("variables")) || !utf8.ValidString(q.Get("operationName")) {
		return nil, refuse(http.StatusBadRequest, "the request is not valid UTF-8")
	}
	if loneSurrogate([]byte(q.Get("variables"))) || loneSurrogate([]byte(q.Get("extensions"))) {
		return nil, refuse(http.StatusBadRequest, loneSurrogateMessage)
	}
	// gqlgen answers undecodable variables or extensions with a bare
	// message: check them here and answer with a code.
	if checkVariables([]byte(q.Get("variables"))) != nil {
		return nil, refuse(http.StatusBadRequest, errVariablesTooLarge.Error())
	}
	objs := map[string]map[string]any{}
	for _, name := range []string{"variables", "extensions"} {
		if dup := repeatedName([]byte(q.Get(name))); dup != "" {
			return nil, refuse(http.StatusBadRequest, ("/" + duplicateMember(name) + dup).Error())
		}
		obj, err := decodeObject(q.Get(name))
		if err != nil {
			return nil, refuse(http.StatusBadRequest, name+" must be a JSON object")
		}
		objs[name] = obj
	}
	return newParams(&graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName"),
		Variables: objs["variables"], Extensions: objs["extensions"]}), nil
}
