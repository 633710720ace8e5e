"""The kemu docker image, driven through kemu.testcontainers.KemuContainer."""
