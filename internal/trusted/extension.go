package trusted

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Extension is the gqlgen extension that lets only listed documents run.
// It reads each operation's parameters before any other extension, on
// every transport (POST, GET, multipart, both websocket subprotocols,
// SSE): a request naming a listed hash alone gets its document filled
// in; an unknown hash is PERSISTED_QUERY_NOT_FOUND; a document sent whole
// that is not listed is FORBIDDEN.
type Extension struct {
	Docs *Documents
	// MaxTokens bounds the parse of a document that is not listed by
	// its exact hash (MAX_TOKENS; 0: no bound).
	MaxTokens int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = Extension{}

func (Extension) ExtensionName() string                   { return "TrustedDocuments" }
func (Extension) Validate(graphql.ExecutableSchema) error { return nil }

// Codes of the refusals: both are among the contract's codes.
const (
	codeNotFound  = "PERSISTED_QUERY_NOT_FOUND"
	codeForbidden = "FORBIDDEN"
)

func (e Extension) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		hash := persistedHash(p.Extensions)
		if hash == "" {
			return nil // gqlgen refuses a request without a document
		}
		doc, ok := e.Docs.Get(context.Background(), hash)
		if !ok {
			// Apollo's clients look for this exact message.
			return refusal(codeNotFound, "PersistedQueryNotFound")
		}
		p.Query = doc
		return nil
	}
	if !e.Docs.Allowed(p.Query, e.MaxTokens) {
		return refusal(codeForbidden, "this server runs only the documents of its trusted list, and this document is not one")
	}
	return nil
}

func refusal(code, msg string) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, code)
	return err
}

// persistedHash is the sha256Hash of the persisted-query extension, or "".
func persistedHash(ext map[string]any) string {
	pq, _ := ext["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}
