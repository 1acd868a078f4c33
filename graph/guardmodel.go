package graph

import (
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/social"
)

// GuardModel is the cost model of this schema (internal/gqlguard): pages
// of at most social.MaxFirst items, audience lists of
// social.MaxAudienceSize users, and user-written text at its longest once
// encoded as JSON (six bytes a character: a control character is written
// \u00XX, and an error response, which encoding/json writes, escapes <, >
// and & as \u003c).
func GuardModel(schema *ast.Schema) gqlguard.Model {
	const jsonBytesPerChar = 6
	return gqlguard.Model{
		Schema:  schema,
		PageArg: "first",
		MaxPage: social.MaxFirst,
		ListSizes: map[string]int{
			"Post.onlyTo": social.MaxAudienceSize,
			"Post.notTo":  social.MaxAudienceSize,
		},
		DefaultListSize: social.MaxFirst,
		StringBytes: map[string]int{
			"Post.content":    jsonBytesPerChar * social.MaxPostLen,
			"Comment.content": jsonBytesPerChar * social.MaxCommentLen,
			"User.bio":        jsonBytesPerChar * social.MaxBioLen,
		},
		// Names, e-mail addresses, cursors, timestamps: short.
		DefaultStringBytes: 256,
	}
}
