import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
const [out, drop, exp] = [process.argv[2], (process.argv[3]||'').split(',').filter(Boolean), process.argv[4]];
const all=[['charts','BarChart'],['charts','LineChart'],['components','GridComponent'],['components','LegendPlainComponent'],['components','TooltipComponent'],['components','MarkLineComponent'],['components','TitleComponent'],['renderers','CanvasRenderer'],['renderers','SVGRenderer']].filter(m=>!drop.includes(m[1]));
const ex = exp==='few' ? `export { init, getInstanceByDom, dispose, use, registerTheme } from 'echarts/core';` : `export * from 'echarts/core';`;
const entry=[...all.map(([f,n])=>`import { ${n} } from 'echarts/${f}';`),`import { use } from 'echarts/core';`,`use([${all.map(m=>m[1]).join(',')}]);`, ex, ''].join('\n');
const r=await build({stdin:{contents:entry,resolveDir:'/work/main',loader:'js'},bundle:true,format:'iife',globalName:'echarts',minify:true,write:false,target:'es2020',define:{'process.env.NODE_ENV':'"production"',__DEV__:'false'},logLevel:'error'});
writeFileSync(out, r.outputFiles[0].contents);
