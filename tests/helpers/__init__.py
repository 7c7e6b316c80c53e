"""What several test folders share: fixture servers, real clients, engines, sample files, the GUI harness."""
