"""Report routes of the HTTP API."""

from fastapi import APIRouter

router = APIRouter(tags=["reports"])
