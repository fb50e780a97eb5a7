"""Exporters: key.json -> LMS files (Moodle XML, GIFT, Canvas QTI)."""
