package graphiql

import (
	"embed"
	"strings"
)

// Tab is one editor tab GraphiQL opens with.
type Tab struct {
	Query     string `json:"query"`
	Variables string `json:"variables,omitempty"`
	Headers   string `json:"headers,omitempty"`
}

//go:embed examples/*.graphql
var exampleFS embed.FS

// examples lists the tabs in the order they open: the file, and the
// variables it is shown with.
var examples = []struct{ file, variables string }{
	{"timeline.graphql", `{"first": 10, "after": null}`},
	{"post.graphql", `{"input": {"content": "Hello from GraphiQL"}}`},
	{"live.graphql", ""},
	{"notifications.graphql", `{"first": 10}`},
	{"markread.graphql", `{"upTo": null}`},
	{"profile.graphql", `{"input": {"displayName": "Alice", "bio": "Hello from GraphiQL"}}`},
	{"removefollower.graphql", `{"userId": ""}`},
	{"filter.graphql", `{"input": {"phrase": "spoiler", "context": ["HOME", "PUBLIC"], "expiresIn": 86400}}`},
	{"followrequests.graphql", `{"first": 20}`},
	{"approvefollow.graphql", `{"userId": ""}`},
	{"login.graphql", `{"login": "alice", "password": "demo password"}`},
	{"refresh.graphql", `{"refreshToken": ""}`},
	{"changepassword.graphql", `{"currentPassword": "demo password", "newPassword": ""}`},
	{"requestreset.graphql", `{"email": "alice@example.com"}`},
	{"resetpassword.graphql", `{"token": "", "newPassword": ""}`},
	{"changeemail.graphql", `{"newEmail": "", "password": "demo password"}`},
	{"verifyemail.graphql", `{"token": ""}`},
	{"requestexport.graphql", ""},
	{"dataexport.graphql", ""},
	{"report.graphql", `{"input": {"postId": "", "reason": "spam"}}`},
	{"reports.graphql", `{"first": 20}`},
	{"deleteaccount.graphql", `{"password": ""}`},
}

// Examples returns the tabs the IDE opens with (when the browser has no
// saved tabs of its own): the home timeline with cursor paging, publishing
// a post, the live timeline subscription, notifications and marking them
// read, editing one's profile, removing a follower, follow requests and
// their approval, adding a keyword filter, logging in, refreshing, the
// account's password and e-mail flows, its data export and deletion,
// reporting and the moderators' queue: one operation a tab, so that Run
// runs it without asking which.
// Each query explains itself in its comments; the headers stay empty, for
// the user's own access token.
func Examples() []Tab {
	tabs := make([]Tab, len(examples))
	for i, ex := range examples {
		q, err := exampleFS.ReadFile("examples/" + ex.file)
		if err != nil {
			panic(err)
		}
		tabs[i] = Tab{Query: strings.TrimSpace(string(q)) + "\n", Variables: ex.variables}
	}
	return tabs
}
