package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// readJSONObject reads an optional JSON file holding an object; a missing file gives nil, nil.
func readJSONObject(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("parse %s: want a JSON object, got null", path)
	}
	return obj, nil
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
