#!/bin/sh
echo plain script user-data
