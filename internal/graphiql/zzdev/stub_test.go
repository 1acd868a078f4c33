package main

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/socialgw/gateway/internal/graphiql"
)

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	h := graphiql.Handler("Gateway", "/query")
	mux.Handle("/", h)
	mux.Handle(graphiql.AssetPath, h)
	mux.HandleFunc("/query", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(stdout, r.Method+" /query\n")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"__typename":"Query"}}`)
	})
	srv := &http.Server{Handler: mux}
	go func() { <-ctx.Done(); srv.Close() }()
	ready("http://" + ln.Addr().String())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
