"""Paper reproductions: the seeds' tables at reduced scale."""
