module github.com/vrender/vrender

go 1.26.0

require (
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	golang.org/x/text v0.44.0 // indirect
)
