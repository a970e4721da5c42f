import json

with open("config.json") as f:
    config = json.load(f)
assert config["server"] == {"host": "127.0.0.1", "port": 8080, "debug": False}, config
assert config["name"] == "demo" and config["features"] == ["search", "export"], config
print("ok")
