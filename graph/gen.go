package graph

// gqlgen resolves the paths of gqlgen.yml from the working directory:
// run it from the repository root.
//
//go:generate sh -c "cd .. && go tool gqlgen generate --config gqlgen.yml"
