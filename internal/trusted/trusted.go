// Package trusted holds the list of documents a gateway runs when trusted
// documents are on (TRUSTED_DOCUMENTS): a manifest written when the
// clients are built, as Apollo's persisted-query manifests and GraphQL
// Yoga's trusted documents are. Only its documents run, sent whole or by
// their SHA-256 in the persisted-query extension; anything else is
// refused before it is validated, on every transport.
package trusted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// Documents are a manifest's documents by hash, and by the canonical form
// of each (its definitions printed in a fixed order), so that a client
// that sends a listed document with other spacing or comments (urql
// collapses whitespace) is recognised.
type Documents struct {
	byHash    map[string]string
	canonical map[string]bool
	// seen remembers, by their SHA-256, the texts that are listed
	// documents in another spelling, so each is parsed once; bounded,
	// and only listed documents enter it. Keyed by hash, not text: a
	// comment is no token, so a variant can be as large as a body.
	mu   sync.Mutex
	seen map[string]bool
}

// maxSeen bounds Documents.seen.
const maxSeen = 1000

// Operation is one entry of an Apollo persisted-query manifest.
type Operation struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Body string `json:"body"`
}

// Manifest is an Apollo persisted-query manifest
// (format "apollo-persisted-query-manifest", version 1).
type Manifest struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	Operations []Operation `json:"operations"`
}

// Hash is the hex SHA-256 of a document, as persisted queries name it.
func Hash(doc string) string {
	h := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(h[:])
}

// Load reads a manifest: Apollo's ({"format": …, "operations": [{"id",
// "body"}]}) or a plain object of hash to document (GraphQL Codegen's
// persisted documents, GraphQL Yoga). Every hash must be its document's
// SHA-256, and every document must parse.
func Load(path string) (*Documents, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, nil
}

// Parse reads a manifest's bytes (Load).
func Parse(b []byte) (*Documents, error) {
	byHash := map[string]string{}
	var m Manifest
	if err := json.Unmarshal(b, &m); err == nil && m.Format != "" {
		if m.Format != "apollo-persisted-query-manifest" || m.Version != 1 {
			return nil, fmt.Errorf("manifest format %q version %d: want apollo-persisted-query-manifest version 1", m.Format, m.Version)
		}
		for _, op := range m.Operations {
			byHash[op.ID] = op.Body
		}
	} else if err := json.Unmarshal(b, &byHash); err != nil {
		return nil, errors.New("not a persisted-query manifest: want Apollo's format or an object of hash to document")
	}
	if len(byHash) == 0 {
		return nil, errors.New("the manifest lists no document")
	}
	d := &Documents{byHash: map[string]string{}, canonical: map[string]bool{}, seen: map[string]bool{}}
	for id, body := range byHash {
		d.byHash[strings.ToLower(id)] = body
		if Hash(body) != strings.ToLower(id) {
			return nil, fmt.Errorf("document %s: its hash is not the SHA-256 of its body", id)
		}
		c, err := canonical(body, 0)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", id, err)
		}
		d.canonical[c] = true
	}
	return d, nil
}

// Len is the number of listed documents.
func (d *Documents) Len() int { return len(d.byHash) }

// Get returns the listed document of a hash. With Add, Documents serve
// as the gateway's persisted-query cache: a hash resolves to a listed
// document only.
func (d *Documents) Get(_ context.Context, hash string) (string, bool) {
	doc, ok := d.byHash[strings.ToLower(hash)]
	return doc, ok
}

// Add does nothing: under trusted documents no client registers one.
func (d *Documents) Add(context.Context, string, string) {}

// Allowed reports whether doc is a listed document: by its hash, or else
// by its canonical form. maxTokens bounds the parse (0: no bound).
func (d *Documents) Allowed(doc string, maxTokens int) bool {
	hash := Hash(doc)
	if _, ok := d.byHash[hash]; ok {
		return true
	}
	d.mu.Lock()
	ok, known := d.seen[hash]
	d.mu.Unlock()
	if known {
		return ok
	}
	c, err := canonical(doc, maxTokens)
	if err != nil || !d.canonical[c] {
		return false
	}
	d.mu.Lock()
	if len(d.seen) < maxSeen {
		d.seen[hash] = true
	}
	d.mu.Unlock()
	return true
}

// canonical prints a document with its operations first, then its
// fragments, each group in name order: what it means, not how it was
// spelled.
func canonical(doc string, maxTokens int) (string, error) {
	q, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: doc}, maxTokens)
	if err != nil {
		return "", err
	}
	slices.SortStableFunc(q.Operations, func(a, b *ast.OperationDefinition) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(q.Fragments, func(a, b *ast.FragmentDefinition) int { return strings.Compare(a.Name, b.Name) })
	var sb strings.Builder
	formatter.NewFormatter(&sb).FormatQueryDocument(q)
	return sb.String(), nil
}
