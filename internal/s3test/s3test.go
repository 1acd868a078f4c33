// Package s3test serves a real S3-compatible API (gofakes3, in memory)
// over HTTP on a free local port for tests, as internal/redistest starts a
// real Redis: the code under test talks to it with the AWS SDK through
// gocloud's s3blob, exactly as it talks to S3 in production.
package s3test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

var seq atomic.Int64

// Server is a running S3-compatible server.
type Server struct {
	URL    string // http://127.0.0.1:port
	client *s3.Client
}

// Start serves a fresh in-memory S3 for the test, stopped when it ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	faker := gofakes3.New(s3mem.New())
	ts := httptest.NewServer(faker.Server())
	tb.Cleanup(ts.Close)
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ts.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		// The fake does not read the streaming checksum trailers the SDK
		// sends by default.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	return &Server{URL: ts.URL, client: client}
}

// Bucket creates a new bucket on the server and opens it with s3blob.
func (s *Server) Bucket(tb testing.TB) *blob.Bucket {
	tb.Helper()
	ctx := context.Background()
	name := "media-" + strconv.FormatInt(seq.Add(1), 10)
	if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		tb.Fatalf("s3test: create bucket: %v", err)
	}
	b, err := s3blob.OpenBucket(ctx, s.client, name, nil)
	if err != nil {
		tb.Fatalf("s3test: open bucket: %v", err)
	}
	return b
}
